import PipelineCore
import IAPStages
import IAPOperations

/// With one bucket a purchase's keys do not depend on its original transaction: tests that name
/// a unit alone use these (a purchase's keys with several buckets need its original transaction).
extension RedisKeys {
    package func claim(unit: String) -> String { oneBucket().claim(unit: unit, originalTransactionID: unit) }
    package func grant(unit: String) -> String { oneBucket().grant(unit: unit, originalTransactionID: unit) }
    package func refunded(unit: String) -> String { oneBucket().refunded(unit: unit, originalTransactionID: unit) }
    package func hold(unit: String) -> String { oneBucket().hold(unit: unit, originalTransactionID: unit) }

    private func oneBucket() -> RedisKeys {
        precondition(layout.count == 1, "with several buckets a purchase's keys need its original transaction id")
        return self
    }
}
