import PipelineCore
import PlainJSON
import Testing

/// A re-check schedule written straight into a grant's argument says what its tree says.
@Suite struct RecheckScheduleTests {
    @Test(arguments: [
        RecheckSchedule.standard,
        RecheckSchedule(before: .seconds(3600), after: .milliseconds(1500), maxTries: 0),
        RecheckSchedule(before: .zero, after: .seconds(86400 * 30), maxTries: 12),
    ])
    func itsWrittenTextIsItsTreesCanonicalText(schedule: RecheckSchedule) {
        var json = JSONWriter()
        schedule.write(into: &json)
        #expect(json.text == schedule.json.canonicalText)
    }
}
