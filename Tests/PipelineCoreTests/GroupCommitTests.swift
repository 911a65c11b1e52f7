import PipelineCore
import NIOConcurrencyHelpers
import Testing

/// The group commit on its own: no Redis, a flush that records its batches and can be held.
@Suite struct GroupCommitTests {
    /// A flush that records each batch, doubles each item, and waits at a gate while one is shut.
    final class RecordingFlush: Sendable {
        let batches = NIOLockedValueBox<[[Int]]>([])
        let gate = AsyncStream<Void>.makeStream()
        let holding: Bool
        let failing: Set<Int>

        init(holdingTheFirst: Bool = false, failing: Set<Int> = []) {
            self.holding = holdingTheFirst
            self.failing = failing
        }

        func callAsFunction(_ items: [Int]) async throws -> [Int] {
            let first = batches.withLockedValue { batches in
                batches.append(items)
                return batches.count == 1
            }
            if first && holding {
                for await _ in gate.stream { break }
            }
            if items.contains(where: failing.contains) { throw Failure() }
            return items.map { $0 * 2 }
        }

        struct Failure: Error {}
    }

    @Test func aLoneItemIsWrittenAtOnceByItsCaller() async throws {
        let flush = RecordingFlush()
        let commit = GroupCommit<Int, Int>(maxBatch: 8) { try await flush($0) }
        #expect(try await commit.submit(21) == 42)
        #expect(try await commit.submit(5) == 10)
        #expect(flush.batches.withLockedValue { $0 } == [[21], [5]])
    }

    @Test func itemsArrivingDuringAWriteRideTogetherInTheNextOne() async throws {
        let flush = RecordingFlush(holdingTheFirst: true)
        let commit = GroupCommit<Int, Int>(maxBatch: 4) { try await flush($0) }
        try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            group.addTask { (0, try await commit.submit(0)) }
            // The first write is on the wire (held): everything else queues behind it.
            while commit.waiting == 0 && flush.batches.withLockedValue({ $0.isEmpty }) { await Task.yield() }
            for item in 1...9 { group.addTask { (item, try await commit.submit(item)) } }
            while commit.waiting < 9 { await Task.yield() }
            flush.gate.continuation.yield()
            var outputs: [Int: Int] = [:]
            for try await (item, output) in group { outputs[item] = output }
            // Everyone got their own output.
            #expect(outputs == Dictionary(uniqueKeysWithValues: (0...9).map { ($0, $0 * 2) }))
        }
        let batches = flush.batches.withLockedValue { $0 }
        #expect(batches.first == [0])
        // Nine waiting, four at most per write: three more writes, every item exactly once.
        #expect(batches.count == 4)
        #expect(batches.dropFirst().allSatisfy { $0.count <= 4 })
        #expect(batches.flatMap { $0 }.sorted() == Array(0...9))
    }

    @Test func aFailedWriteFailsItsBatchOnlyAndTheNextCallerCarriesOn() async throws {
        let flush = RecordingFlush(holdingTheFirst: true, failing: [3])
        let commit = GroupCommit<Int, Int>(maxBatch: 2) { try await flush($0) }
        try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            group.addTask { (0, (try? await commit.submit(0)) != nil) }
            while flush.batches.withLockedValue({ $0.isEmpty }) { await Task.yield() }
            group.addTask { (3, (try? await commit.submit(3)) != nil) }
            while commit.waiting < 1 { await Task.yield() }
            group.addTask { (4, (try? await commit.submit(4)) != nil) }
            while commit.waiting < 2 { await Task.yield() }
            group.addTask { (5, (try? await commit.submit(5)) != nil) }
            while commit.waiting < 3 { await Task.yield() }
            flush.gate.continuation.yield()
            var succeeded: [Int: Bool] = [:]
            for try await (item, ok) in group { succeeded[item] = ok }
            // [3, 4] failed together; 5 went on in the write after.
            #expect(succeeded == [0: true, 3: false, 4: false, 5: true])
        }
        #expect(flush.batches.withLockedValue { $0 } == [[0], [3, 4], [5]])
        #expect(try await commit.submit(6) == 12)
    }

    /// Items and outputs cross the untyped core (`GroupCommitCore`) and come back as they went in,
    /// an absent output (`nil` of an optional type) included, each to its own caller.
    @Test func optionalItemsAndOutputsComeBackAsTheyWent() async throws {
        let commit = GroupCommit<String?, Int?>(maxBatch: 8) { items in items.map { $0.map(\.count) } }
        #expect(try await commit.submit("four") == 4)
        #expect(try await commit.submit(nil) == nil)
        try await withThrowingTaskGroup(of: (String?, Int?).self) { group in
            for item in ["", nil, "abc", nil, "zz"] as [String?] { group.addTask { (item, try await commit.submit(item)) } }
            for try await (item, output) in group { #expect(output == item.map(\.count)) }
        }
    }
}
