import Foundation
import PipelineTestSupport
import Testing

/// docker/alerts.yml, the alerting rules shipped beside the Grafana dashboard: Prometheus's own
/// `promtool` (Debian's `prometheus`, which workers/deps installs) checks them and runs their
/// unit tests (docker/alerts.test.yml: each alert fires on its series and not on a healthy
/// fleet's), and every alert's runbook link names a section docs/operations/runbook.md has.
@Suite struct AlertRulesTests {
    static let docker = repositoryRoot.appendingPathComponent("docker")

    @Test func promtoolChecksTheRulesAndTheirTestsPass() async throws {
        let promtool = try #require(executableOnPath("promtool"), "promtool is not installed: workers/deps --tests installs prometheus")
        let checked = try await runTool(promtool, ["check", "rules", Self.docker.appendingPathComponent("alerts.yml").path])
        #expect(checked.status == 0 && checked.output.contains("SUCCESS: 9 rules found"), "\(checked.output)")
        let tested = try await runTool(promtool, ["test", "rules", "alerts.test.yml"], directory: Self.docker)
        #expect(tested.status == 0 && tested.output.contains("SUCCESS"), "\(tested.output)")
    }

    @Test func everyAlertHasItsRunbookSection() throws {
        let rules = try String(contentsOf: Self.docker.appendingPathComponent("alerts.yml"), encoding: .utf8)
        let runbook = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/operations/runbook.md"), encoding: .utf8)
        let alerts = rules.split(separator: "\n").compactMap { line -> String? in
            let text = line.trimmingCharacters(in: .whitespaces)
            return text.hasPrefix("- alert: ") ? String(text.dropFirst("- alert: ".count)) : nil
        }
        #expect(alerts.count == 9)
        for alert in alerts {
            #expect(rules.contains("runbook.md#\(alert.lowercased())\""), "\(alert)'s runbook link")
            #expect(runbook.contains("\n## \(alert)\n"), "runbook.md has no section for \(alert)")
        }
    }
}
