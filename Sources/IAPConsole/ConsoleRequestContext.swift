import Hummingbird

/// A console request: who is signed in (from the session cookie) and that cookie.
package struct ConsoleRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package var user: ConsoleUser?
    var sessionID: String?
    /// The request asks for a page's JSON twin (`Accept: application/json`).
    var wantsJSON = false

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
