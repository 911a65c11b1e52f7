import Foundation
import PipelineCore
import PipelineTestSupport
import PlainJSON
import Testing

/// Dead letters replayed or purged from the console: by group, after a dry run whose
/// confirmation names exactly the previewed entries, each acted on once, by a role that may.
@Suite(.serialized) struct ConsoleDeadLetterTests {
    /// The preview's confirmation form's fields, as a browser would post them.
    static func confirmation(in page: String) -> String {
        let pattern = try! NSRegularExpression(pattern: #"<input type="hidden" name="(\w+)" value="([^"]*)">"#)
        let range = NSRange(page.startIndex..., in: page)
        let fields = pattern.matches(in: page, range: range).map { match in
            (String(page[Range(match.range(at: 1), in: page)!]), String(page[Range(match.range(at: 2), in: page)!]))
        }
        // One form's worth: the replay form comes first and the purge form repeats the same fields.
        var seen: Set<String> = []
        var form: [String] = []
        for (name, value) in fields {
            if name == "bucket", seen.contains("bucket") { break }
            seen.insert(name)
            form.append("\(name)=\(value)")
        }
        return form.joined(separator: "&")
    }

    @Test func anOperatorReplaysAPreviewedGroupOnceAndAViewerMayNot() async throws {
        try await ConsoleHarness.withConsole(maxAttempts: 2) { pipeline, console in
            // Apple fails twice for each of three receipts: they die (retries_exhausted) and Apple then recovers.
            var tickets: [String] = []
            for id in ["2000000000000951", "2000000000000952", "2000000000000953"] {
                let ticket = try await pipeline.submit(receipt([gold(id)], failures: 2), user: "dead-player")
                #expect(try await pipeline.terminal(ticket).status == .dead)
                tickets.append(ticket)
            }
            // And one of another group, which the replay must not touch.
            let other = try await pipeline.submit(receipt([.init(transactionID: "2000000000000954", productID: "not.in.catalog")]), user: "dead-player")
            #expect(try await pipeline.terminal(other).status == .dead)

            let vera = try await console.signIn("vera")
            let list = try await console.send(.GET, "/dead", cookie: vera)
            let href = try #require(list.body.range(of: #"/dead/preview\?[^"]*retries_exhausted"#, options: .regularExpression).map { String(list.body[$0]) })
            let preview = href.replacingOccurrences(of: "&amp;", with: "&")
            let seenByViewer = try await console.send(.GET, preview, cookie: vera)
            #expect(seenByViewer.status == 200 && tickets.allSatisfy { seenByViewer.body.contains($0) } && !seenByViewer.body.contains(other))
            #expect(!seenByViewer.body.contains("action=\"/dead/replay\""), "a viewer is shown no form")
            #expect(seenByViewer.body.contains("iapctl dead replay --dry-run"))
            let form = Self.confirmation(in: try await console.send(.GET, preview, cookie: try await console.signIn("oscar")).body)
            #expect(form.components(separatedBy: "entry=").count == 4, "\(form)")
            #expect(try await console.send(.POST, "/dead/replay", form: form, cookie: vera).status == 403)
            #expect(try await pipeline.length(pipeline.configuration.keys.dead) == 4, "the preview and a refused POST change nothing")

            let oscar = try await console.signIn("oscar")
            #expect(try await console.send(.POST, "/dead/purge", form: form, cookie: oscar).status == 403, "an operator may not purge")
            let replayed = try await console.send(.POST, "/dead/replay", form: form, cookie: oscar)
            #expect(replayed.status == 200 && replayed.body.contains("Replayed 3 of the 3"), "\(replayed.body)")
            for ticket in tickets { #expect(try await pipeline.terminal(ticket).status == .granted) }
            let again = try await console.send(.POST, "/dead/replay", form: form, cookie: oscar)
            #expect(again.status == 409 && again.body.contains("Nothing replayed"))
            let entries = try await pipeline.store.deadLetters(limit: 10).map(DeadLetter.decode)
            #expect(entries.count == 1 && entries.first?.ticket == other)
            let granted = try await pipeline.fulfilments().filter { $0["event"] == "granted" }
            #expect(granted.count == 3, "each replayed purchase granted once: \(granted)")
            let forged = try await console.send(.POST, "/dead/replay", form: "bucket=0&start=0&seen=1&entry=zz", cookie: oscar)
            #expect(forged.status == 400)
        }
    }

    @Test func anAdminPurgesExactlyThePreviewedEntriesEvenAfterNewOnesArrive() async throws {
        try await ConsoleHarness.withConsole { pipeline, console in
            let key = pipeline.store.keys.dead
            func letter(_ index: Int, reason: String) -> String {
                DeadLetter(job: "{}", stage: "grant", reason: reason, error: "e\(index)", attempts: 1, at: 1_795_000_000_000 + Int64(index), ticket: "t-\(index)").encoded()
            }
            for index in 0..<5 { _ = try await pipeline.redis.send("LPUSH", key, letter(index, reason: "poison")) }
            for index in 5..<8 { _ = try await pipeline.redis.send("LPUSH", key, letter(index, reason: "other")) }
            let ada = try await console.signIn("ada")
            let page = try await console.send(.GET, "/dead/preview?bucket=0&start=0&stage=grant&reason=poison", cookie: ada)
            #expect(page.body.contains("Delete these 5 for good"), "\(page.body)")
            // Two new poison letters arrive between the preview and the confirmation: they stay.
            for index in 8..<10 { _ = try await pipeline.redis.send("LPUSH", key, letter(index, reason: "poison")) }
            let purged = try await console.send(.POST, "/dead/purge", form: Self.confirmation(in: page.body), cookie: ada)
            #expect(purged.status == 200 && purged.body.contains("Purged 5 of the 5"), "\(purged.body)")
            let left = try await pipeline.store.deadLetters(limit: 20).map { try DeadLetter.decode($0).ticket ?? "" }
            #expect(Set(left) == ["t-5", "t-6", "t-7", "t-8", "t-9"])
        }
    }

    /// Every page's JSON twin is the values its template was given, with the iapctl line.
    @Test func eachPageHasAJSONTwin() async throws {
        try await ConsoleHarness.withConsole { pipeline, console in
            let ticket = try await pipeline.submit(receipt([gold("2000000000000961")]), user: "json-player")
            #expect(try await pipeline.terminal(ticket).status == .granted)
            let vera = try await console.signIn("vera")
            let json = [("Sec-Fetch-Site", "same-origin"), ("Accept", "application/json")]
            for (path, line) in [("/", "iapctl stats"), ("/tickets/\(ticket)", "iapctl ticket \(ticket)"), ("/users/json-player", "iapctl user show json-player"),
                                 ("/held", "iapctl held list"), ("/dead", "iapctl dead list --limit 50")] {
                let reply = try await console.send(.GET, path, cookie: vera, headers: json)
                #expect(reply.status == 200 && reply.headers["content-type"] == "application/json", "\(path)")
                let value = try JSONValue(parsing: reply.body)
                #expect(value["iapctl"]?.string == line, "\(path): \(reply.body.prefix(300))")
                let page = try await console.send(.GET, path, cookie: vera)
                #expect(page.body.contains("<code>\(line)</code>"), "\(path)")
            }
            let overview = try JSONValue(parsing: try await console.send(.GET, "/", cookie: vera, headers: json).body)
            let sweeps = overview["sweeps"]?.array?.compactMap { $0["text"]?.string } ?? []
            #expect(sweeps.count == 2 && sweeps[0].hasPrefix("notification sweep: ") && sweeps[1].hasPrefix("refund sweep: "), "\(sweeps)")
            #expect(overview["stages"]?.array?.count == 5 && overview["counts"]?.array?.first?["key"]?.string == "retry")
            let ticketPage = try JSONValue(parsing: try await console.send(.GET, "/tickets/\(ticket)", cookie: vera, headers: json).body)
            #expect(ticketPage["transactions"]?.array?.first?["transactionID"]?.string == "2000000000000961")
            let strange = try await console.send(.GET, "/users/o'brien%20x", cookie: vera)
            #expect(strange.body.contains("<code>iapctl user show &#39;o&#39;\\&#39;&#39;brien x&#39;</code>"), "\(strange.body)")
        }
    }

    /// 100,000 dead letters: the overview, the dead-letter pages (first and last window) and a
    /// preview read windows, never the whole list, and never walk the keyspace, as Redis's own
    /// MONITOR sees every command the console (and the idle intake) sent.
    @Test func aHundredThousandDeadLettersAreNeverReadWhole() async throws {
        let redisCLI = try #require(executableOnPath("redis-cli"), "redis-cli comes with Debian's redis-server")
        try await ConsoleHarness.withConsole(startWorkers: false) { pipeline, console in
            let fill = """
                for i = 1, 100000 do
                  redis.call('LPUSH', KEYS[1], '{"attempts":1,"at":1795000000000,"error":"e","job":"{}","reason":"r' .. (i % 3) .. '","stage":"grant","ticket":"t-' .. i .. '"}')
                end
                return redis.call('LLEN', KEYS[1])
                """
            #expect(try await pipeline.redis.send("EVAL", fill, "1", pipeline.store.keys.dead).int == 100_000)
            let seen = FileManager.default.temporaryDirectory.appendingPathComponent("monitor-\(UUID().uuidString).txt")
            _ = FileManager.default.createFile(atPath: seen.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: seen) }
            let monitor = Process()
            monitor.executableURL = URL(fileURLWithPath: redisCLI)
            monitor.arguments = ["-u", pipeline.redisServer.url, "monitor"]
            monitor.standardOutput = try FileHandle(forWritingTo: seen)
            try monitor.run()
            defer { monitor.terminate() }
            // MONITOR answers OK once it listens: wait for that line (and the intake's sampling).
            while !((try? String(contentsOf: seen, encoding: .utf8)) ?? "").contains("LLEN") { await Task.yield() }

            let ada = try await console.signIn("ada")
            let overview = try await console.send(.GET, "/", cookie: ada)
            #expect(overview.status == 200 && overview.body.contains("<dd data-count=\"dead\">100000</dd>"), "\(overview.body.prefix(3000))")
            let first = try await console.send(.GET, "/dead", cookie: ada)
            #expect(first.body.contains("1–50 of 100000"))
            let last = try await console.send(.GET, "/dead?bucket=0&start=99950", cookie: ada)
            #expect(last.body.contains("99951–100000 of 100000") && last.body.contains("t-1<"))
            let preview = try await console.send(.GET, "/dead/preview?bucket=0&start=99950&stage=grant&reason=r1", cookie: ada)
            #expect(preview.body.contains("Delete these 17 for good"), "\(preview.body.suffix(1500))")
            let json = try await console.send(.GET, "/", cookie: ada, headers: [("Accept", "application/json")])
            #expect(json.status == 200)
            // A command the monitor sees after the last page: everything before it has been seen.
            _ = try await pipeline.redis.send("ECHO", "console-test-done")
            while !((try? String(contentsOf: seen, encoding: .utf8)) ?? "").contains("console-test-done") { await Task.yield() }

            let commands = try String(contentsOf: seen, encoding: .utf8).split(separator: "\n").map { line in
                line.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            }
            #expect(commands.count > 20, "the monitor saw the console's commands")
            #expect(!commands.contains { ["KEYS", "SCAN", "SMEMBERS", "HGETALL", "SORT"].contains($0.first?.uppercased() ?? "") && $0.count > 1 && $0[1].hasSuffix("dead") })
            #expect(!commands.contains { ["KEYS", "SCAN"].contains($0.first?.uppercased() ?? "") }, "no walk of the keyspace")
            for command in commands where command.first?.uppercased() == "LRANGE" {
                let (start, stop) = (Int(command[2]) ?? 0, Int(command[3]) ?? -1)
                #expect(stop >= 0 && stop - start < 1100, "a bounded window: \(command)")
            }
            #expect(commands.contains { $0.first?.uppercased() == "LRANGE" && $0[2] == "99950" }, "the last window was read as a window")
        }
    }
}
