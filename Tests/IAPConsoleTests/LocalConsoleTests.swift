import AsyncHTTPClient
import Foundation
import LoopbackPort
import NIOCore
import PipelineTestSupport
import Testing

/// `iapctl console`, the executable: one operator's console on loopback, whatever
/// IAP_CONSOLE_HOST and IAP_CONSOLE_USERS_FILE say, signed in with the password it prints.
@Suite struct LocalConsoleTests {
    @Test func iapctlConsoleServesLoopbackWithAPasswordPrintedOnce() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let port = try LoopbackPort.free()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                .appendingPathComponent("iapctl")
            process.arguments = ["console"]
            process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IAP_") }.merging([
                "IAP_REDIS_URL": pipeline.redisServer.url, "IAP_CONSOLE_PORT": String(port),
                // Ignored: iapctl console is for one operator on this machine.
                "IAP_CONSOLE_HOST": "0.0.0.0", "IAP_CONSOLE_USERS_FILE": "/nonexistent/users.json",
            ]) { _, new in new }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            let (lines, sink) = AsyncStream.makeStream(of: String.self)
            output.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty { sink.finish() } else { sink.yield(String(decoding: data, as: UTF8.self)) }
            }
            try process.run()
            defer {
                process.terminate()
                process.waitUntilExit()
                output.fileHandleForReading.readabilityHandler = nil
            }
            var printed = ""
            for await chunk in lines {
                printed += chunk
                if printed.contains("console listening") && printed.contains("with password ") { break }
            }
            let password = try #require(printed.firstMatch(of: /with password ([A-Za-z0-9_-]+)/).map { String($0.output.1) }, "\(printed)")
            #expect(printed.contains("127.0.0.1"), "\(printed)")

            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            do {
                var signIn = HTTPClientRequest(url: "http://127.0.0.1:\(port)/login")
                signIn.method = .POST
                signIn.headers.add(name: "Sec-Fetch-Site", value: "same-origin")
                signIn.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                signIn.body = .bytes(ByteBuffer(string: "username=local&password=\(password)"))
                let answer = try await http.execute(signIn, timeout: .seconds(20))
                #expect(answer.status == .seeOther)
                let cookie = try #require(answer.headers.first(name: "set-cookie")?.split(separator: ";").first.map(String.init))
                var overview = HTTPClientRequest(url: "http://127.0.0.1:\(port)/")
                overview.headers.add(name: "Cookie", value: cookie)
                let page = try await http.execute(overview, timeout: .seconds(20))
                let body = String(buffer: try await page.body.collect(upTo: 1 << 20))
                #expect(page.status == .ok && body.contains("local (admin)"), "\(body.prefix(500))")
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }
}
