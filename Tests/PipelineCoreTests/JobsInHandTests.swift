@testable import PipelineCore
import Testing

/// `JobsInHand`: each job taken in is held under its own number until let go, a payload held
/// twice (a list can hold it twice) counts twice, and letting one go leaves the other.
@Suite struct JobsInHandTests {
    @Test func aPayloadHeldTwiceCountsTwiceUntilEachIsLetGo() {
        var held = JobsInHand()
        let first = held.take("job-a")
        let second = held.take("job-a")
        let other = held.take("job-b")
        #expect(Set([first, second, other]).count == 3)
        #expect(held.count == 3)
        #expect(held.countsByPayload() == ["job-a": 2, "job-b": 1])
        held.letGo(first)
        #expect(held.countsByPayload() == ["job-a": 1, "job-b": 1])
        held.letGo(first)  // a number let go twice changes nothing more
        held.letGo(other)
        #expect(held.count == 1)
        #expect(held.countsByPayload() == ["job-a": 1])
        held.letGo(second)
        #expect(held.count == 0 && held.countsByPayload().isEmpty)
    }
}
