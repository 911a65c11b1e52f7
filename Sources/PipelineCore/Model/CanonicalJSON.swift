import Foundation

/// JSON with sorted keys and unescaped slashes: the same value always gives the same bytes,
/// which matters because a job's exact bytes identify it in Redis lists.
package func canonicalJSON(_ value: some Encodable) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Our models hold strings, numbers and arrays of them: encoding cannot fail.
    return try! encoder.encode(value)
}
