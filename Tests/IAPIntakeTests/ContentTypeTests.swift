import Testing

@testable import IAPIntake

/// The intake takes JSON bodies only: the media type before any parameters, any case.
struct ContentTypeTests {
    @Test(arguments: [
        ("application/json", true), ("Application/JSON", true), (" application/json", true),
        ("application/json; charset=utf-8", true), ("application/json ;charset=utf-8", true), ("application/json  ", true),
        ("application/jsonx", false), ("application/json-patch+json", false), ("application/js", false),
        ("text/plain", false), ("", false), ("json", false), ("application/json,text/plain", false),
    ])
    func theMediaTypeDecides(contentType: String, isJSON: Bool) {
        #expect(IntakeRoutes.isJSON(contentType) == isJSON)
    }

    @Test func noContentTypeIsNotJSON() {
        #expect(!IntakeRoutes.isJSON(nil))
    }
}
