import Hummingbird

extension Request {
    /// A header's first value, by its lowercase name (for names HTTPTypes does not predefine).
    func header(_ lowercaseName: String) -> String? {
        headers.first { $0.name.canonicalName == lowercaseName }?.value
    }
}
