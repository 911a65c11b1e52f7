import AppleReceipt

/// Grant stage: records each new grant, publishes it on the fulfilment stream and sets the
/// ticket's final status, all in one script per job.
public struct GrantHandler: JobHandler {
    public let stage = Stage.grant
    public let transitions: [any PipelineScript.Type] = [GrantPurchases.self]

    public init() {}

    public func handle(_ payload: String, worker: WorkerContext) async {
        guard let job = try? Job.decode(payload), job.stage == .grant, job.purchases != nil else {
            await worker.deadLetter(payload, ticket: nil, reason: ReasonCode.undecodableJob, error: "not a grant job", attempts: 0)
            return
        }
        let outcome = await worker.transition(GrantPurchases.self) {
            try await worker.store.grant(payload, member: worker.member, job: job)
        }
        guard let (result, status) = outcome else { return }
        if result == .moved {
            worker.logger.info("ticket finished", metadata: ["ticket": "\(job.ticket)", "status": "\(status?.rawValue ?? "?")"])
        }
        await worker.settle(result, payload: payload, job: job, by: GrantPurchases.self)
    }
}
