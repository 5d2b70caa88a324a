public import Foundation

/// An account as the catalog records it.
public struct AccountRecord: Hashable, Sendable {
    /// Where an account is in its life: signed in, or being signed out.
    public enum State: String, Sendable {
        /// Searched and written to.
        case signedIn
        /// A sign-out was recorded and is being (or will be) completed; never searched again.
        case signingOut
    }

    /// The account's identifier.
    public var id: AccountID
    /// Whether the account is signed in or being signed out.
    public var state: State
    /// When the account was signed in.
    public var signedInAt: Date
    /// The account's folder, relative to the store.
    package var directory: String
    /// Which sign-in this is: a number the store never gives twice, so a sign-out followed by a sign-in
    /// is told apart from an account that stayed signed in.
    package var generation: Int64

    /// Makes an entry as a catalog storage reads it.
    package init(id: AccountID, state: State, signedInAt: Date, directory: String, generation: Int64) {
        self.id = id
        self.state = state
        self.signedInAt = signedInAt
        self.directory = directory
        self.generation = generation
    }
}

/// The sign-in an account's files were opened under. Every operation on them checks it first, so a
/// sign-out made by another process, or by another ``Store`` value on the same folder, is noticed at once
/// instead of leaving stale data served and new writes lost in deleted files.
package struct SignInLease: Sendable {
    let catalog: any CatalogStorage
    package let account: AccountID
    package let generation: Int64
    /// The storages check the sign-in themselves, in their own transactions (PostgreSQL): the index's
    /// check of the catalog would only repeat it.
    var checkedByStorage = false

    /// Fails with code `accountNotSignedIn` unless the account is still signed in under ``generation``.
    @available(*, noasync, message: "it waits for the catalog; in async code run it in Blocking.run")
    package func check() throws {
        try catalog.requireSignedIn(account, generation: generation)
    }

    /// The same check, as the index takes it.
    package var index: IndexLease {
        checkedByStorage
            ? IndexLease(generation: generation, check: {}) : IndexLease(generation: generation, check: check)
    }
}
