/// What a console user may do; each role from `viewer` up may do all that the ones below it may.
/// `viewer` reads; `support` also looks orders up at Apple and grants through the pipeline;
/// `operator` also releases and rejects holds and replays dead letters and sees the Business page;
/// `admin` also purges. `finance` stands apart, below them all: it sees the Business page and
/// nothing else (`SignInMiddleware` keeps it there).
package enum ConsoleRole: String, Sendable, CaseIterable, Comparable {
    case finance
    case viewer
    case support
    case `operator`
    case admin

    package static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Who is signed in: the name every action is recorded under (from the session, never a form).
package struct ConsoleUser: Sendable, Equatable {
    package let name: String
    package let role: ConsoleRole

    package init(name: String, role: ConsoleRole) {
        self.name = name
        self.role = role
    }
}
