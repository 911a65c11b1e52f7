import IAPStages
import PipelineCore

/// Every script of the pipeline, one `.lua` file each under `Lua/` (a test loads each into a
/// real Redis, checks it with luac, and runs it on a cluster node that refuses undeclared keys).
/// `PipelineStore` is the only caller.
package enum PipelineScripts {
    package static let all: [any PipelineScript.Type] = [
        AcceptNotification.self, AcknowledgeJob.self, ApplySubscriptionNotification.self, ClaimNotificationSweep.self, ClaimPart.self,
        ClaimPurchases.self, CountSubscription.self, DeadLetterJob.self, EndTimedGrant.self, GrantForATime.self, EraseUserInBucket.self, FinishNotificationSweep.self, FinishPart.self,
        FinishTicket.self, FinishWebhookEvent.self, ForceRecheck.self, ForwardJob.self, GrantByOperator.self,
        GrantPurchases.self, HoldAPIEndpoint.self, ImportPurchase.self, IndexUserEvents.self, MarkVerifying.self, PromoteDueRechecks.self, PromoteDueRetries.self, PseudonymiseTickets.self,
        ReapExpiredWorkers.self, RecordAppleAnswers.self, RecordAppleFailure.self, RecordConsumption.self, RecordHeartbeat.self, RecordNotification.self, RecordQueueSample.self, RecordRetentionAnswer.self, ReinstateGrant.self, RejectHeldPurchase.self, ReleaseDailyGrant.self,
        ReleaseHeldPurchase.self, ReplayDeadLetter.self, RequeueInflight.self, ReserveDailyGrant.self, SeatAppleAccount.self, KeepHistoryRevision.self, RevokeByOperator.self, RevokeGrant.self,
        RouteFulfilmentEvents.self, ScheduleRetry.self, SettleHeldTicket.self, SplitJob.self, SubmitReceipt.self, TakeAPIPermit.self, TakeAppleProbe.self, TakeSubmissionPermit.self, TakeJobs.self, TrimDeadLetters.self, TrimFulfilmentStream.self,
    ]
}
