import Hummingbird

/// The intake's request context: Hummingbird's, plus the client key that signed the request once
/// `RouteAccessMiddleware` checked it. Handlers read the caller from here, never from its headers.
public struct IntakeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The key id of a verified signature; `nil` on an open route or an intake without client keys.
    public var clientKey: String?
    /// The scopes of `clientKey`.
    public var clientScopes: Set<ClientKeys.Scope> = []

    public init(source: Source) {
        coreContext = .init(source: source)
    }
}
