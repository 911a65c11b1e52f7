/// One bench run: the cluster scenarios, and the jws scenario when it ran (`--json` prints this).
public struct BenchReport: Sendable, Codable {
    public var scenarios: [ScenarioResult]
    public var jws: JWSBenchResult?

    public init(scenarios: [ScenarioResult], jws: JWSBenchResult?) {
        self.scenarios = scenarios
        self.jws = jws
    }
}
