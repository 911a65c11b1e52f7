import PipelineCore

extension Job {
    /// A grant job's work, which the grant step reads (the handler takes only grant jobs); no
    /// purchases for a job of another kind.
    var grantWork: Claimed { claimed ?? Claimed(purchases: [], receipt: nil) }
}
