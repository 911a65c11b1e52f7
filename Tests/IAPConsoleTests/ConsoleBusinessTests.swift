import Foundation
import PipelineCore
import PipelineTestSupport
import Testing

/// The Business page: charts and tables of the days' figures, money written for people, for
/// operators, admins and finance (which sees nothing else); its JSON twin says the same.
@Suite(.serialized) struct ConsoleBusinessTests {
    /// A day's figures as the grant steps count them (their counting is BusinessReportTests').
    static func seed(_ pipeline: PipelineHarness, day: FigureDay) async throws {
        let key = pipeline.store.keys.figures(day: day)
        for (field, value) in [
            ("purchases|Production|USA|USD|gems.small", 3), ("units|Production|USA|USD|gems.small", 3),
            ("gross|Production|USA|USD|gems.small", 14_970), ("refunds|Production|USA|USD|gems.small", 1),
            ("refunds_gross|Production|USA|USD|gems.small", 4_990), ("purchases|Production|DEU|EUR|vip.yearly", 1),
            ("units|Production|DEU|EUR|vip.yearly", 1), ("gross|Production|DEU|EUR|vip.yearly", 1_234_500),
            ("subscriptions_started|Production|DEU|EUR|vip.yearly", 1), ("expired:voluntary|Production|||vip.monthly", 2),
            ("purchases|Sandbox|USA|USD|gems.small", 7), ("gross|Sandbox|USA|USD|gems.small", 34_930),
            ("answered_by_rule:japan|Production|JPN|JPY|gems.small", 3), ("refunded_by_rule:japan|Production|JPN|JPY|gems.small", 2),
            ("answered_by_rule:<b>x</b>|Production|USA|USD|gems.small", 1),
            ("retention_offered:loyal|Production|USA||vip.monthly", 8), ("retention_saved:loyal|Production|USA|USD|vip.monthly", 3),
            ("retention_offered:none|Production|||vip.monthly", 2), ("retention_saved:loyal|Sandbox|USA|USD|vip.monthly", 9),
        ] {
            _ = try await pipeline.redis.send("HINCRBY", key, field, String(value))
        }
    }

    @Test func operatorsAndFinanceSeeTheBusinessOthersDoNot() async throws {
        try await ConsoleHarness.withConsole(startWorkers: false) { pipeline, console in
            try await Self.seed(pipeline, day: FigureDay(milliseconds: currentTimeMs()))
            let oscar = try await console.signIn("oscar")
            let page = try await console.send(.GET, "/business", cookie: oscar)
            #expect(page.status == 200 && page.body.contains("<h1>Business</h1>"))
            // Money for people, each in its currency; the sandbox apart.
            #expect(page.body.contains("EUR: gross €1.234,50, refunds €0,00, net €1.234,50"), "\(page.body)")
            #expect(page.body.contains("USD: gross $14.97, refunds $4.99, net $9.98"))
            #expect(!page.body.contains("$34.93"))
            #expect(page.body.contains("<svg class=\"bars\"") && page.body.contains("<rect class=\"gross\"") && page.body.components(separatedBy: "<script").count == 2)
            #expect(page.body.contains("<td>voluntary</td><td class=\"n\">2</td>"))
            // Refund answers by the rule that chose them, and Apple's outcome; a rule's name as text.
            #expect(page.body.contains("<td>japan</td><td class=\"n\">3</td><td class=\"n\">2</td><td class=\"n\">0</td>"), "\(page.body)")
            #expect(page.body.contains("&lt;b&gt;x&lt;/b&gt;") && !page.body.contains("<b>x</b>"))
            // Retention answers by rule, those who stayed and the share; the sandbox's apart.
            #expect(page.body.contains("<td>loyal</td><td class=\"n\">8</td><td class=\"n\">3</td><td class=\"n\">38 %</td>"), "\(page.body)")
            #expect(page.body.contains("<td>none</td><td class=\"n\">2</td><td class=\"n\">0</td><td class=\"n\">0 %</td>"))
            #expect(page.body.contains("<td>vip.yearly</td><td>EUR</td><td class=\"n\">1</td><td class=\"n\">€1.234,50</td>"))
            // The JSON twin: the same values.
            let json = try await console.send(.GET, "/business?days=90", cookie: oscar, headers: [("Accept", "application/json")])
            let twin = try #require(try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? [String: Any])
            let charts = try #require(twin["charts"] as? [[String: Any]])
            #expect(charts.map { $0["currency"] as? String } == ["USD", "EUR"] && charts[0]["refunds"] as? String == "$4.99")
            #expect((twin["iapctl"] as? String)?.hasPrefix("iapctl report revenue --from ") == true)
            let sandbox = try await console.send(.GET, "/business?environment=Sandbox", cookie: oscar)
            #expect(sandbox.body.contains("USD: gross $34.93"))
            #expect(try await console.send(.GET, "/business?days=7", cookie: oscar).status == 400)
            #expect(try await console.send(.GET, "/business?environment=Staging", cookie: oscar).status == 400)

            // Below an operator, no Business page.
            for name in ["vera", "sam"] {
                let session = try await console.signIn(name)
                #expect(try await console.send(.GET, "/business", cookie: session).status == 403, "\(name)")
                #expect(!(try await console.send(.GET, "/", cookie: session).body.contains("href=\"/business\"")))
            }
            // Finance: the Business page and nothing else.
            let fay = try await console.signIn("fay")
            let home = try await console.send(.GET, "/", cookie: fay)
            #expect(home.status == 303 && home.headers["location"] == "/business")
            let shown = try await console.send(.GET, "/business", cookie: fay)
            #expect(shown.status == 200 && shown.body.contains("€1.234,50") && !shown.body.contains("href=\"/held\"") && !shown.body.contains("action=\"/search\""))
            for path in ["/held", "/dead", "/audit", "/users/player-1", "/search?q=x", "/tickets/abc"] {
                #expect(try await console.send(.GET, path, cookie: fay).status == 403, "\(path)")
            }
            #expect(try await console.send(.POST, "/held/u/release", form: "note=x", cookie: fay).status == 403)
            #expect(try await console.send(.POST, "/logout", cookie: fay).status == 303)
        }
    }
}
