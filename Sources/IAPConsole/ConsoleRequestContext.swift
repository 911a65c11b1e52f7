import Hummingbird

/// A console request: who is signed in (from the session cookie) and that cookie.
public struct ConsoleRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var user: ConsoleUser?
    var sessionID: String?
    /// The request asks for a page's JSON twin (`Accept: application/json`).
    var wantsJSON = false

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
