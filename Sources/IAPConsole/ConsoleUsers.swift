import Foundation
import HummingbirdBcrypt
import NIOConcurrencyHelpers
import PipelineCore
import PlainJSON

/// Who may sign in (`IAP_CONSOLE_USERS_FILE`: `{"<name>": {"password_hash": "<bcrypt>", "role":
/// "viewer"|"support"|"operator"|"admin"}}`), reread on SIGHUP. Without a file, one user `local`
/// (admin) whose password is a random token made at start and shown once to whoever started the
/// console (as Jupyter does): the console then listens on loopback only.
package final class ConsoleUsers: Sendable {
    struct Entry: Sendable {
        var passwordHash: String
        var role: ConsoleRole
    }

    package let file: String?
    private let entries: NIOLockedValueBox<[String: Entry]>

    /// Reads `file`; every fault is a `ConsoleUsersError` naming the user and the field.
    package init(file: String) throws(ConsoleUsersError) {
        self.file = file
        entries = NIOLockedValueBox(try Self.read(file))
    }

    /// The one local user, `local`, with `token` as its password.
    package init(localToken token: String) {
        file = nil
        entries = NIOLockedValueBox(["local": Entry(passwordHash: Bcrypt.hash(token, cost: 10), role: .admin)])
    }

    /// A new random token for `init(localToken:)`: 24 bytes, base64url.
    package static func makeToken() -> String { TicketID.random(bytes: 24) }

    package var names: [String] { entries.withLockedValue { $0.keys.sorted() } }

    /// The user, when the password is theirs (bcrypt, whatever the name: an unknown name costs the
    /// same time as a wrong password).
    package func authenticate(name: String, password: String) -> ConsoleUser? {
        let entry = entries.withLockedValue { $0[name] }
        let matches = Bcrypt.verify(password, hash: entry?.passwordHash ?? Self.decoy)
        guard let entry, matches else { return nil }
        return ConsoleUser(name: name, role: entry.role)
    }

    /// The user's role now (a role changed or a user removed by a reload takes effect at once).
    package func role(of name: String) -> ConsoleRole? { entries.withLockedValue { $0[name]?.role } }

    /// Rereads the file; on a fault the users stay as they were and the fault is thrown.
    package func reload() throws(ConsoleUsersError) {
        guard let file else { return }
        let fresh = try Self.read(file)
        entries.withLockedValue { $0 = fresh }
    }

    private static let decoy = Bcrypt.hash(makeToken(), cost: 12)

    static func read(_ file: String) throws(ConsoleUsersError) -> [String: Entry] {
        guard let data = FileManager.default.contents(atPath: file) else { throw ConsoleUsersError("cannot read \(file)") }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(data))
        } catch {
            throw ConsoleUsersError("\(file) is not JSON: \(error)")
        }
        guard let object = json.object, !object.isEmpty else { throw ConsoleUsersError("\(file) must be a JSON object of at least one user") }
        var entries: [String: Entry] = [:]
        for (name, value) in object {
            guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
                throw ConsoleUsersError("user names are 1 to 64 printable ASCII characters: '\(name.prefix(64))'")
            }
            guard let hash = value["password_hash"]?.string, hash.hasPrefix("$2"), hash.utf8.count == 60 else {
                throw ConsoleUsersError("user '\(name)': password_hash must be a bcrypt hash ($2b$…, 60 characters)")
            }
            guard let role = value["role"]?.string.flatMap(ConsoleRole.init(rawValue:)) else {
                throw ConsoleUsersError("user '\(name)': role must be one of viewer, support, operator, admin")
            }
            entries[name] = Entry(passwordHash: hash, role: role)
        }
        return entries
    }
}

package struct ConsoleUsersError: Error, Sendable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = "IAP_CONSOLE_USERS_FILE: " + description }
}
