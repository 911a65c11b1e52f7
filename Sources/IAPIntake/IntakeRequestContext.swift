import Hummingbird

/// The intake's request context: Hummingbird's, plus the client key that signed the request once
/// `RouteAccessMiddleware` checked it. Handlers read the caller from here, never from its headers.
package struct IntakeRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The key id of a verified signature; `nil` on an open route or an intake without client keys.
    package var clientKey: String?
    /// The scopes of `clientKey`.
    package var clientScopes: Set<ClientKeys.Scope> = []

    package init(source: Source) {
        coreContext = .init(source: source)
    }
}
