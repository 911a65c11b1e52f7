/// The pipeline's worker stages, in order.
public enum Stage: String, Codable, Sendable, CaseIterable {
    case verify
    case dedupe
    case grant
}
