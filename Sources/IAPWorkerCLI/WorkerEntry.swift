import IAPCLI

/// The stage executables' mains.
public enum WorkerEntry {
    public static func verifier() async { await ProcessEntry.serve(VerifierCommand.self) }
    public static func deduper() async { await ProcessEntry.serve(DeduperCommand.self) }
    public static func granter() async { await ProcessEntry.serve(GranterCommand.self) }
    public static func notifier() async { await ProcessEntry.serve(NotifierCommand.self) }
    public static func webhook() async { await ProcessEntry.serve(WebhookCommand.self) }
}
