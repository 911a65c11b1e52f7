/// The intake's HTTP API as an OpenAPI 3.1 document: `openapi.json` beside this file, built into
/// the binary, served at `GET /openapi.json`. Change it with the routes: a test checks that its
/// paths are exactly the routes the intake registers, and schemathesis checks every answer against it.
package enum OpenAPIDocument {
    package static let json = String(decoding: PackageResources.openapi_json, as: UTF8.self)
}
