import Foundation
import Replica

/// `replica accounts`: list, sign in, sign out (remove) accounts.
enum AccountsCommand: Command {
    static let name = "accounts"
    static let summary = "list, sign in or sign out accounts"
    static let about = """
          list          the signed-in accounts, one per line (the default)
          sign-in ID    sign an account in: the only way an account comes into use; writes
                        (import, records import, sources add) for an account that is not
                        signed in are refused
          sign-out ID   destroy everything the store holds for the account: its indexes and all
                        their text are deleted from disk, not just hidden
          remove ID     the same as sign-out

        """
    static let json = Option.flag("--json", only: ["list"], "{\"accounts\": [{\"id\": …, \"signedInAt\": …}]}")
    static let options: [any OptionDeclaration] = [json]

    enum Action: String, CaseIterable {
        case list, signIn = "sign-in", signOut = "sign-out", remove
    }
    static let id = Operand.one("ID")
    static let synopses = [
        Synopsis("list", default: true), Synopsis("sign-in", id), Synopsis("sign-out", id), Synopsis("remove", id),
    ]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let action: Action = try arguments.action(of: name, default: .list)
        let store = try context.openStore()
        switch action {
        case .list:
            let json = try arguments[Self.json]
            try arguments.finish()
            let accounts = try await store.signedInAccounts()
            if json {
                Output.printJSON(
                    .object([
                        (
                            "accounts",
                            .array(
                                accounts.map { account in
                                    .object([
                                        ("id", .string(account.id.rawValue)),
                                        ("signedInAt", .string(ISO8601.string(from: account.signedInAt))),
                                    ])
                                })
                        )
                    ]))
            } else {
                for account in accounts { Output.line(account.id.rawValue) }
            }
        case .signIn:
            let account = try single(&arguments, action)
            try await store.signIn(account)
            Output.note("account '\(account)' is signed in")
        case .signOut, .remove:
            let account = try single(&arguments, action)
            guard try await store.signOut(account) else {
                throw CLIError.failure("the store has no account '\(account)'")
            }
            Output.note("account '\(account)' is signed out; everything the store held for it was deleted")
        }
    }

    static func single(_ arguments: inout Arguments, _ action: Action) throws -> AccountID {
        let id = Operand.one(
            "ID", missing: "accounts \(action.rawValue) needs one account ID",
            tooMany: "accounts \(action.rawValue) needs one account ID")
        return try account(arguments[operand: id])
    }
}

/// `replica switch-account`: what an app runs on logout.
enum SwitchAccountCommand: Command {
    static let name = "switch-account"
    static let summary = "sign out every other account and sign one in"
    static let about = """
        Signs out every signed-in account except ID, destroying everything the store holds for them,
        and signs ID in. Meant for logout: afterwards no byte of the other accounts' text is left in
        any file of the store. A switch interrupted halfway is finished by the next replica command.
        """
    static let options: [any OptionDeclaration] = []
    static let id = Operand.one(
        "ID", missing: "switch-account needs one account ID", tooMany: "switch-account needs one account ID")
    static let synopses = [Synopsis("", id)]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let account = try account(arguments[operand: Self.id])
        let store = try context.openStore()
        try await store.switchAccount(to: account)
        Output.note("switched to account '\(account)'")
    }
}
