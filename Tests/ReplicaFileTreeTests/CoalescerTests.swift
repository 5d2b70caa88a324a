import Testing

@testable import ReplicaFileTree

@Suite struct CoalescerTests {
    var coalescer = Coalescer(closeDelay: 0.01, quietPeriod: 1.0, moveWindow: 0.05)

    @Test mutating func aFileWrittenInManyChunksIsIndexedOnceAfterItCloses() {
        for step in 0..<500 { coalescer.receive(.modified("big.log"), at: Double(step) * 0.001) }
        #expect(coalescer.actions(at: 0.6) == [], "still being written, not quiet for long yet")
        coalescer.receive(.closedAfterWriting("big.log"), at: 0.6)
        #expect(coalescer.actions(at: 0.605) == [], "the close delay has not passed")
        #expect(coalescer.nextDeadline() == 0.61)
        #expect(coalescer.actions(at: 0.61) == [.index("big.log")])
        #expect(coalescer.actions(at: 5) == [])
        #expect(coalescer.isIdle)
    }

    @Test mutating func repeatedOpenWriteCloseCyclesSettleIntoOneIndex() {
        for cycle in 0..<20 {
            let at = Double(cycle) * 0.002
            coalescer.receive(.modified("a.txt"), at: at)
            coalescer.receive(.closedAfterWriting("a.txt"), at: at + 0.001)
        }
        #expect(coalescer.actions(at: 0.045) == [])
        #expect(coalescer.actions(at: 0.05) == [.index("a.txt")])
    }

    @Test mutating func aFileHeldOpenIsIndexedAfterAQuietPeriodAndAgainWhenClosed() {
        coalescer.receive(.created("app.log", isDirectory: false), at: 0)
        coalescer.receive(.modified("app.log"), at: 0.5)
        #expect(coalescer.actions(at: 1.4) == [])
        #expect(coalescer.nextDeadline() == 1.5)
        #expect(coalescer.actions(at: 1.5) == [.index("app.log")], "never left behind while held open")
        coalescer.receive(.modified("app.log"), at: 2)
        coalescer.receive(.closedAfterWriting("app.log"), at: 2.1)
        #expect(coalescer.actions(at: 2.2) == [.index("app.log")])
    }

    @Test mutating func movesPairByCookieIntoOneRename() {
        coalescer.receive(.movedFrom("old.md", cookie: 7, isDirectory: false), at: 0)
        coalescer.receive(.movedFrom("docs", cookie: 8, isDirectory: true), at: 0)
        coalescer.receive(.movedTo("new.md", cookie: 7, isDirectory: false), at: 0.01)
        coalescer.receive(.movedTo("archive/docs", cookie: 8, isDirectory: true), at: 0.01)
        #expect(
            coalescer.actions(at: 0.01) == [
                .rename(from: "old.md", to: "new.md", isDirectory: false),
                .rename(from: "docs", to: "archive/docs", isDirectory: true),
            ])
        #expect(coalescer.isIdle)
    }

    @Test mutating func aMoveWithoutItsPairLeftOrEnteredTheRoot() {
        coalescer.receive(.movedFrom("gone.txt", cookie: 1, isDirectory: false), at: 0)
        coalescer.receive(.movedFrom("gone-dir", cookie: 2, isDirectory: true), at: 0)
        coalescer.receive(.movedTo("arrived.txt", cookie: 3, isDirectory: false), at: 0)
        coalescer.receive(.movedTo("arrived-dir", cookie: 4, isDirectory: true), at: 0)
        #expect(coalescer.actions(at: 0.02) == [.addTree("arrived-dir"), .index("arrived.txt")])
        #expect(coalescer.actions(at: 0.05) == [.remove("gone.txt"), .removeTree("gone-dir")])
    }

    @Test mutating func aDeletionWinsOverPendingWrites() {
        coalescer.receive(.modified("tmp.txt"), at: 0)
        coalescer.receive(.closedAfterWriting("tmp.txt"), at: 0.001)
        coalescer.receive(.deleted("tmp.txt", isDirectory: false), at: 0.002)
        #expect(coalescer.actions(at: 0.002) == [.remove("tmp.txt")])
    }

    @Test mutating func directoriesAreAddedAndRemovedAtOnceWithWhatWasPendingUnderThem() {
        coalescer.receive(.created("new", isDirectory: true), at: 0)
        coalescer.receive(.modified("old/a.txt"), at: 0)
        coalescer.receive(.deleted("old", isDirectory: true), at: 0.001)
        #expect(coalescer.nextDeadline() == 0)
        #expect(coalescer.actions(at: 0.001) == [.addTree("new"), .removeTree("old")])
    }

    @Test mutating func anOverflowDropsWhatWasPendingForOneReconcile() {
        coalescer.receive(.modified("a.txt"), at: 0)
        coalescer.receive(.movedFrom("b.txt", cookie: 5, isDirectory: false), at: 0)
        coalescer.receive(.overflow, at: 0.001)
        #expect(coalescer.actions(at: 10) == [.reconcile])
        #expect(coalescer.isIdle)
    }

    @Test mutating func attributeChangesReindexAFile() {
        coalescer.receive(.attributesChanged("secret.txt"), at: 0)
        #expect(coalescer.actions(at: 0.01) == [.index("secret.txt")])
        #expect(coalescer.nextDeadline() == nil)
    }
}
