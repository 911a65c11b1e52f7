import Foundation
import Hummingbird
import PipelineCore

/// Signing in and out: a throttled, audited sign-in that opens a session in Redis; a sign-out
/// that ends it there first.
extension ConsoleApplication {
    struct SignInForm: Decodable {
        var username: String
        var password: String
    }

    /// A sign-in: refused while its name has failed too often (before any password is checked),
    /// each failure counted; Redis unavailable is a `503`, never a pretence either way.
    func signIn(_ request: Request, context: ConsoleRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 16 << 10)
        guard let form = try? URLEncodedFormDecoder().decode(SignInForm.self, from: String(buffer: body)), form.username.utf8.count <= 256 else {
            return page("login", ["title": "Sign in", "error": "Give a name and a password."], status: .badRequest)
        }
        let name = form.username
        let user: ConsoleUser?
        do {
            if let wait = try await throttle.refusal(of: name) {
                context.logger.notice("console sign-in throttled", metadata: ["user": "\(name.prefix(64))"])
                if users.role(of: name) != nil { await audit.record("sign-in", by: name, target: "", outcome: "throttled", logger: context.logger) }
                var response = page("login", [
                    "title": "Sign in", "username": name,
                    "error": "Too many failed sign-ins for this name: try again in \(Int((wait.components.seconds + 59) / 60)) minutes.",
                ], status: .tooManyRequests)
                response.headers[.retryAfter] = String(wait.components.seconds)
                return response
            }
            user = users.authenticate(name: name, password: form.password)
            if user == nil { try await throttle.failed(name) } else { try await throttle.succeeded(name) }
        } catch {
            throw HTTPError(.serviceUnavailable, message: "Redis does not answer: try again")
        }
        guard let user else {
            context.logger.notice("console sign-in refused", metadata: ["user": "\(name.prefix(64))"])
            // Only a known name's refusals: guesses at unknown names would push real entries out.
            if users.role(of: name) != nil { await audit.record("sign-in", by: name, target: "", outcome: "refused", logger: context.logger) }
            return page("login", ["title": "Sign in", "error": "Wrong name or password.", "username": name], status: .unauthorized)
        }
        let id: String
        do {
            id = try await sessions.open(for: user)
        } catch {
            throw HTTPError(.serviceUnavailable, message: "Redis does not answer: try again")
        }
        context.logger.notice("console sign-in", metadata: ["user": "\(user.name)", "role": "\(user.role.rawValue)"])
        await audit.record("sign-in", by: user.name, target: "", outcome: "signed in as \(user.role.rawValue)", logger: context.logger)
        var response = Response.redirect(to: "/", type: .normal)
        response.setCookie(Cookie(
            name: SignInMiddleware.cookie, value: id, maxAge: Int(sessions.lifetime.components.seconds), path: "/", secure: secureCookie,
            httpOnly: true, sameSite: .strict))
        return response
    }

    /// Signed out only once Redis forgot the session: a failure is a 503, never a pretence.
    func signOut(context: ConsoleRequestContext) async throws -> Response {
        if let id = context.sessionID {
            do {
                try await sessions.close(id)
            } catch {
                throw HTTPError(.serviceUnavailable, message: "Redis does not answer: you are still signed in; try again")
            }
        }
        var response = Response.redirect(to: "/login", type: .normal)
        response.setCookie(Cookie(
            name: SignInMiddleware.cookie, value: "", maxAge: 0, path: "/", secure: secureCookie, httpOnly: true, sameSite: .strict))
        return response
    }
}
