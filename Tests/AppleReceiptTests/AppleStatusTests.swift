import AppleReceipt
import Testing

@Suite struct AppleStatusTests {
    @Test func validAndReroutes() {
        #expect(AppleStatus.classify(0) == .valid)
        #expect(AppleStatus.classify(21007) == .sandboxReceipt)
        #expect(AppleStatus.classify(21008) == .productionReceipt)
    }

    @Test(arguments: [21000, 21004])
    func ourMisconfigurationIsNeverTheUsersFault(_ status: Int) {
        #expect(AppleStatus.classify(status) == .misconfigured)
    }

    @Test(arguments: [21005, 21009])
    func appleUnavailableIsTransient(_ status: Int) {
        #expect(AppleStatus.classify(status) == .transient)
        #expect(AppleStatus.classify(status, attempt: 12) == .transient)
    }

    @Test(arguments: [21003, 21006, 21010, 21001, 21011, 21999])
    func otherAppleCodesRejectTheReceipt(_ status: Int) {
        #expect(AppleStatus.classify(status) == .rejected)
    }

    @Test func malformedIsRetriedUpToASmallCapThenRejected() {
        for attempt in 1..<AppleStatus.malformedRetryCap {
            #expect(AppleStatus.classify(21002, attempt: attempt) == .transient)
        }
        #expect(AppleStatus.classify(21002, attempt: AppleStatus.malformedRetryCap) == .rejected)
        #expect(AppleStatus.classify(21002, attempt: 50) == .rejected)
    }

    @Test(arguments: [21100, 21150, 21199])
    func internalErrorsFollowIsRetryable(_ status: Int) {
        #expect(AppleStatus.classify(status, isRetryable: true) == .transient)
        #expect(AppleStatus.classify(status, isRetryable: false) == .rejected)
    }

    @Test(arguments: [1, 500, 30000, -1])
    func undocumentedCodesAreRetriedNotRejected(_ status: Int) {
        #expect(AppleStatus.classify(status) == .transient)
    }

    @Test func reasonCodesAreStable() {
        #expect(AppleStatus.reason(21003) == "apple_status_21003")
    }
}
