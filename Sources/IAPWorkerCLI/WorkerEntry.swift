import IAPCLI

/// The stage executables' mains.
package enum WorkerEntry {
    package static func verifier() async { await ProcessEntry.serve(VerifierCommand.self) }
    package static func deduper() async { await ProcessEntry.serve(DeduperCommand.self) }
    package static func granter() async { await ProcessEntry.serve(GranterCommand.self) }
    package static func notifier() async { await ProcessEntry.serve(NotifierCommand.self) }
    package static func webhook() async { await ProcessEntry.serve(WebhookCommand.self) }
}
