import Testing

/// Tests that start a fleet of processes or a browser (the drills, the bench, the console in
/// chromium) take turns: on two cores, two of them at once starve each other's processes, and a
/// drill's worker then misses its deadline to register (seen in CI once the browser test came).
/// On a suite it holds the turn for the whole suite; a test inside it does not ask again.
public struct TakingTurns: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if Turns.holding {
            try await function()
            return
        }
        await Turns.shared.take()
        do {
            try await Turns.$holding.withValue(true) { try await function() }
        } catch {
            await Turns.shared.pass()
            throw error
        }
        await Turns.shared.pass()
    }
}

extension Trait where Self == TakingTurns {
    public static var takingTurns: TakingTurns { TakingTurns() }
}

/// One turn at a time, first come first served.
actor Turns {
    static let shared = Turns()
    @TaskLocal static var holding = false
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func take() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func pass() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
