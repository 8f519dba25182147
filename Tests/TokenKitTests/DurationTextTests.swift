import Testing
import TokenKit

/// The one duration formatter of every message.
@Suite struct DurationTextTests {
  @Test(arguments: [
    (0, "0 s"), (40, "40 s"), (60, "1 min"), (2519, "41 min"), (3600, "1 h"), (11_100, "3 h 5 min"),
    (86_400, "1 d"), (187_200, "2 d 4 h"), (-5, "0 s"),
  ])
  func wholeSeconds(seconds: Int, text: String) {
    #expect(DurationText.format(seconds: seconds) == text)
  }

  @Test(arguments: [
    (Duration.milliseconds(1500), "1.5 s"), (.seconds(30), "30 s"), (.seconds(300), "5 min"),
    (.milliseconds(90_500), "1 min"), (.milliseconds(50), "0 s"),
  ])
  func durations(duration: Duration, text: String) {
    #expect(DurationText.format(duration) == text)
  }
}
