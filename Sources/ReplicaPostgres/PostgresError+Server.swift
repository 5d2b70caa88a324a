import CPostgres
import Foundation

extension PostgresError {
    /// The classes of SQLSTATE whose primary messages name only objects (tables, columns, roles, files,
    /// settings) and never quote a value: connection, feature, transaction state, authorization,
    /// catalog, rollback, syntax and access, resources, limits, object state, intervention, system. Data
    /// exceptions (22), constraint violations (23), raised messages (P0) and internal errors (XX) quote
    /// values, so theirs are left out.
    static let classesWithoutData: Set<Substring> = [
        "08", "0A", "25", "28", "2B", "3B", "3D", "3F", "40", "42", "53", "54", "55", "57", "58",
    ]

    /// The error a failed statement's result reports, in words; `result` is the failed `PGresult` or
    /// `nil` (libpq then holds the message on the connection).
    static func statementFailure(_ result: OpaquePointer?, on connection: PostgresConnection, sql: String?)
        -> PostgresError
    {
        func field(_ code: Character) -> String? {
            guard let result, let value = PQresultErrorField(result, Int32(code.asciiValue!)) else { return nil }
            return String(cString: value)
        }
        let server = connection.serverDescription
        guard let sqlState = field("C") else {
            // libpq's own failure (no server reply): its message quotes nothing of the data.
            let text = connection.libpqMessage
            if let abandonment = connection.abandonment {
                return PostgresError(
                    .connectionLost, "the connection to \(server) was lost: " + abandonment + "; run the command again",
                    serverMessage: text, sql: sql)
            }
            if PQstatus(connection.handle) != CONNECTION_OK {
                return PostgresError(
                    .connectionLost,
                    "the connection to \(server) was lost (the server ended the session, "
                        + "restarted or went away): run the command again once the server is up", serverMessage: text,
                    sql: sql)
            }
            // libpq's own words (such as "could not receive data from server: Input/output error").
            return PostgresError(
                .other, "libpq could not run the statement on \(server)" + (text.map { ": " + $0 } ?? ""),
                serverMessage: text, sql: sql)
        }
        let primary = field("M")
        let kept = classesWithoutData.contains(sqlState.prefix(2)) ? primary : nil
        let constraint = field("n")
        let table = [field("s"), field("t")].compactMap { $0 }.joined(separator: ".")
        let onTable = table.isEmpty ? "" : " on table \(table)"
        let code = Code(sqlState: sqlState)
        let message: String
        switch code {
        case .diskFull:
            message =
                "\(server) has no disk space left: the failed statement was rolled back and what was committed before "
                + "is intact; free space on the server's disk, then run the command again"
        case .readOnly:
            message =
                "\(server) accepts no writes: it is a read-only standby, or default_transaction_read_only is on for "
                + "this role or database; point the database URL at the primary server"
        case .serializationFailure:
            message =
                "the transaction conflicted with another one running at the same time and was rolled back; running it "
                + "again usually succeeds"
        case .deadlock:
            message =
                "the transaction and another one were each waiting for the other, and PostgreSQL rolled this one back; "
                + "running it again usually succeeds"
        case .statementTimeout:
            message =
                "the statement ran longer than statement_timeout allows (or was cancelled) and was stopped; raise the "
                + "timeout (ALTER ROLE … SET statement_timeout) or find what made it slow"
        case .uniqueViolation:
            message =
                "a row would have the same key as an existing one: the unique constraint \"\(constraint ?? "?")\"\(onTable) forbids it"
        case .undefinedTable:
            message =
                "a table the statement uses does not exist in the database \(connection.databaseName): has its schema been created?"
        case .insufficientPrivilege:
            message =
                "the role \(connection.userName) may not do this in the database \(connection.databaseName): grant it the "
                + "privilege it lacks (see the README's roles and grants)"
        case .connectionLost:
            message =
                "the connection to \(server) was lost (the server ended the session, restarted or went away): run the "
                + "command again once the server is up"
        case .tooManyConnections:
            message =
                "\(server) has no connection slot left: lower the pool's size, or raise max_connections on the server"
        default:
            switch sqlState.prefix(2) {
            case "23" where sqlState == "23502":
                message = "a NULL was given for column \(field("c") ?? "?")\(onTable), which requires a value"
            case "23":
                message = "a row breaks the constraint \"\(constraint ?? "?")\"\(onTable)"
            case "22":
                let column = field("c").map { " in column \($0)\(onTable)" } ?? ""
                message = "a value\(column) does not fit its type or range (a data exception)"
            default:
                message = "\(server) reported an error"
            }
        }
        return PostgresError(code, message, sqlState: sqlState, serverMessage: kept, constraint: constraint, sql: sql)
    }

    /// The error a failed connection attempt reports. libpq's message (its first line only, with the
    /// password taken out) carries the SQLSTATE because the connection asks for verbose errors.
    static func connectionFailure(
        message libpq: String, server: String, user: String, database: String,
        password: String?, timedOut: Bool
    ) -> PostgresError {
        var firstLine = String(libpq.split(separator: "\n", omittingEmptySubsequences: true).first ?? "")
        if let password, !password.isEmpty { firstLine = firstLine.replacingOccurrences(of: password, with: "*****") }
        let sqlState = Self.sqlState(inVerboseMessage: firstLine)
        let kept = firstLine.isEmpty ? nil : firstLine
        let code: Code
        if timedOut {
            code = .serverUnreachable
        } else if let sqlState {
            code = Code(sqlState: sqlState)
        } else if firstLine.contains("Connection refused") || firstLine.contains("No such file or directory") {
            code = .connectionRefused
        } else {
            code = .serverUnreachable
        }
        var message: String
        switch code {
        case .connectionRefused:
            message =
                "\(server) refused the connection: is it running? Start it (scripts/postgres.sh start DIR starts a "
                + "test server) or check the database URL (--database, $REPLICA_DATABASE)"
        case .serverUnreachable where timedOut:
            message =
                "\(server) did not answer in time: check the host and port in the database URL and that the network reaches it"
        case .serverUnreachable where sqlState == "57P03":
            message = "\(server) is starting up, shutting down or recovering: try again in a moment"
        case .serverUnreachable:
            message =
                "\(server) could not be reached: check the host and port in the database URL (--database, "
                + "$REPLICA_DATABASE) and that the network reaches it"
        case .authenticationFailed:
            message =
                "\(server) refused the sign-in of the role \(user): check the user name and password in the database "
                + "URL, and that pg_hba.conf lets the role sign in from here"
        case .databaseMissing:
            message =
                "the database \(database) does not exist on \(server): create it (CREATE DATABASE \(database) OWNER "
                + "\(user), see the README) or fix its name in the database URL"
        case .tooManyConnections:
            message =
                "\(server) has no connection slot left: lower the pool's size, or raise max_connections on the server"
        default:
            message = "could not connect to \(server) as the role \(user)"
            // A refusal as a session starts names roles, databases and files, never rows (the password,
            // if the line held it, is starred out above); libpq's double spaces squeezed.
            if let fatal = firstLine.range(of: "FATAL:") {
                message +=
                    "; the server said: " + firstLine[fatal.lowerBound...].split(separator: " ").joined(separator: " ")
            }
        }
        return PostgresError(code, message, sqlState: sqlState, serverMessage: kept)
    }

    /// The SQLSTATE in a message libpq wrote with verbose errors (`FATAL:  28P01: password …`): five
    /// digits or capitals after two spaces, followed by a colon.
    static func sqlState(inVerboseMessage message: String) -> String? {
        let characters = Array(message.utf8)
        guard characters.count >= 9 else { return nil }
        for start in 2...(characters.count - 7) where characters[start - 2] == 0x20 && characters[start - 1] == 0x20 {
            let candidate = characters[start..<start + 5]
            if characters[start + 5] == UInt8(ascii: ":"),
                candidate.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) })
            {
                return String(decoding: candidate, as: UTF8.self)
            }
        }
        return nil
    }
}
