/// The pipeline's worker stages: the three a purchase passes through, in order, and the one that
/// applies Apple's Server Notifications.
public enum Stage: String, Codable, Sendable, CaseIterable {
    case verify
    case dedupe
    case grant
    case notify
}
