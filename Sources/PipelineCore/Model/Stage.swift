/// The pipeline's worker stages: the three a purchase passes through, in order, the one that
/// applies Apple's Server Notifications, and the one that delivers the fulfilment stream's events
/// to the game backend's webhook.
package enum Stage: String, Codable, Sendable, CaseIterable {
    case verify
    case dedupe
    case grant
    case notify
    case webhook
}
