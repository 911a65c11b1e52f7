import Foundation
import PipelineCore
import PipelineTestSupport
import Testing

/// The user page's grants for a time: support gives one by the form (checked as the API checks
/// it, audited), it shows with its end and a button to take it back; a viewer can do neither.
@Suite(.serialized) struct ConsoleGrantTests {
    @Test func supportGivesAndTakesBackAGrantForATimeAViewerCannot() async throws {
        try await ConsoleHarness.withConsole(startWorkers: false) { pipeline, console in
            let sam = try await console.signIn("sam")
            let made = try await console.send(
                .POST, "/users/player-9/grants", form: "grant_id=case-77&entitlement=premium&days=7&reason=outage", cookie: sam)
            #expect(made.status == 201 && made.body.contains("player-9 has premium until"), "\(made.body)")
            let again = try await console.send(
                .POST, "/users/player-9/grants", form: "grant_id=case-77&entitlement=premium&days=7&reason=outage", cookie: sam)
            #expect(again.status == 200 && again.body.contains("Granted before"))
            let unknown = try await console.send(
                .POST, "/users/player-9/grants", form: "grant_id=case-78&entitlement=gold&days=7&reason=x", cookie: sam)
            #expect(unknown.status == 400 && unknown.body.contains("no product of the catalog gives gold"))
            let tooLong = try await console.send(
                .POST, "/users/player-9/grants", form: "grant_id=case-79&entitlement=premium&days=400&reason=x", cookie: sam)
            #expect(tooLong.status == 400)

            let page = try await console.send(.GET, "/users/player-9", cookie: sam)
            #expect(page.body.contains("<tr data-grant=\"case-77\"><td>case-77</td><td>premium</td>") && page.body.contains("<td>active</td>"), "\(page.body)")
            #expect(page.body.contains("action=\"/users/player-9/grants/case-77/end\"") && page.body.contains("<option>no_ads</option>"))
            let grants = try await pipeline.store.timedGrants(of: "player-9")
            #expect(grants.map { "\($0.grantID) \($0.source) \($0.by)" } == ["case-77 console sam"])

            // A viewer sees the grant, neither the form nor the button, and may not post either.
            let vera = try await console.signIn("vera")
            let seen = try await console.send(.GET, "/users/player-9", cookie: vera)
            #expect(seen.body.contains("data-grant=\"case-77\"") && !seen.body.contains("/grants/case-77/end") && !seen.body.contains("name=\"grant_id\""))
            #expect(try await console.send(.POST, "/users/player-9/grants/case-77/end", cookie: vera).status == 403)
            #expect(try await console.send(
                .POST, "/users/player-9/grants", form: "grant_id=v&entitlement=premium&days=1&reason=x", cookie: vera).status == 403)

            let back = try await console.send(.POST, "/users/player-9/grants/case-77/end", cookie: sam)
            #expect(back.status == 200 && back.body.contains("premium taken back from player-9"))
            #expect(try await pipeline.store.timedGrants(of: "player-9").first?.endedBy == "revoked")
            let audit = try await console.send(.GET, "/audit", cookie: try await console.signIn("ada"))
            #expect(audit.body.contains("user.grant") && audit.body.contains("user.ungrant"))
        }
    }
}
