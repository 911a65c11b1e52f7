import Hummingbird

/// A console request: who is signed in (from the session cookie) and that cookie.
public struct ConsoleRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var user: ConsoleUser?
    var sessionID: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
