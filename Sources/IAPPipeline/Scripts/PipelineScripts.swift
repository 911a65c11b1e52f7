import RedisClient

/// The Lua scripts that move jobs between Redis structures: each move is one of these, atomic.
public enum PipelineScripts {
    public static let all: [RedisScript] = [
        submitReceipt, markVerifying, forwardJob, scheduleRetry, deadLetterJob, finishTicket,
        claimPurchases, grantPurchases, promoteDueRetries, reapExpiredWorkers, requeueInflight, replayDeadLetter,
    ]
}
