import AsyncHTTPClient
import Foundation
import LoopbackPort
import NIOCore
import TestSupport
import PipelineTestSupport
import Testing

/// A real Prometheus (Debian's `prometheus`, which `workers/test` installs) scrapes the intake's
/// `/metrics` every second: the target is up, and the counters move as receipts flow.
@Suite(.serialized) struct PrometheusTests {
    static func query(_ http: HTTPClient, _ base: String, _ promQL: String) async throws -> Double? {
        let escaped = promQL.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        // Until it is up, Prometheus refuses or answers text: no value yet.
        guard let response = try? await http.execute(HTTPClientRequest(url: "\(base)/api/v1/query?query=\(escaped)"), timeout: .seconds(5)),
              let body = try? await response.body.collect(upTo: 1 << 20),
              let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any],
              let data = object["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else { return nil }
        // The sum of every series' value (`[time, "value"]`).
        let values = result.compactMap { ($0["value"] as? [Any])?.last as? String }.compactMap(Double.init)
        return values.isEmpty ? nil : values.reduce(0, +)
    }

    @Test func aRealPrometheusScrapesTheIntakeAndSeesReceiptsFlow() async throws {
        let binary = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let prometheus = try #require(binary, "prometheus is not installed: workers/test (workers/deps) installs it")
        try await withPipeline { pipeline in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prometheus-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = """
                global: {scrape_interval: 1s, evaluation_interval: 1s}
                scrape_configs:
                  - job_name: iap-intake
                    static_configs: [{targets: ["127.0.0.1:\(pipeline.intake.port)"]}]
                """
            try config.write(to: directory.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
            let port = try LoopbackPort.free()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: prometheus)
            process.arguments = [
                "--config.file=\(directory.appendingPathComponent("prometheus.yml").path)",
                "--storage.tsdb.path=\(directory.appendingPathComponent("data").path)",
                "--web.listen-address=127.0.0.1:\(port)",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer {
                process.terminate()
                process.waitUntilExit()
            }
            let base = "http://127.0.0.1:\(port)"
            let http = pipeline.http
            // Another process's state, with no event to await: polled.
            try await until("prometheus scrapes the intake", within: .seconds(60)) {
                try await Self.query(http, base, #"up{job="iap-intake"}"#) == 1
            }
            let accepted = #"iap_http_requests_total{route="/v1/receipts",status="202"}"#
            let grants = #"iap_jobs_total{stage="grant",outcome="grant_purchases"}"#
            let acceptedBefore = try await Self.query(http, base, accepted) ?? 0
            let grantsBefore = try await Self.query(http, base, grants) ?? 0
            for index in 0..<5 {
                _ = try await pipeline.terminal(try await pipeline.submit(receipt([gold("prom-\(index)")])))
            }
            try await until("the scraped counters move with the receipts", within: .seconds(60)) {
                let acceptedNow = try await Self.query(http, base, accepted) ?? 0
                let grantsNow = try await Self.query(http, base, grants) ?? 0
                return acceptedNow >= acceptedBefore + 5 && grantsNow >= grantsBefore + 5
            }
            // The queue gauges the intake samples are there too.
            #expect(try await Self.query(http, base, #"iap_queue_depth{queue="verify"}"#) != nil)
        }
    }
}
