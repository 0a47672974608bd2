"""Free slots: inside the window, outside busy times, on everyone's working hours, across DST changes."""

from datetime import datetime
from zoneinfo import ZoneInfo

from tether.packs.perin import WorkingHours
from tether.packs.perin._slots import free_slots, time_window, utc_seconds

ISRAEL, LONDON = ZoneInfo("Asia/Jerusalem"), ZoneInfo("Europe/London")


def at(zone: ZoneInfo, day: int, hour: int, minute: int = 0, month: int = 3) -> int:
    return utc_seconds(datetime(2026, month, day, hour, minute, tzinfo=zone))


def starts(slots: list[tuple[int, int]], zone: ZoneInfo) -> list[str]:
    return [time_window(*slot, zone)["start"][11:16] for slot in slots]


def test_working_hours_follow_the_local_clock_on_the_day_it_changes() -> None:
    # London goes to +01:00 at 01:00 UTC on 29 March 2026: 09:00 local is 08:00 UTC that day, 09:00 UTC before
    hours = [WorkingHours("Europe/London")]
    before = free_slots((at(LONDON, 28, 8), at(LONDON, 28, 10)), 3600, [], hours, limit=1)
    after = free_slots((at(LONDON, 29, 8), at(LONDON, 29, 10)), 3600, [], hours, limit=1)
    assert starts(before, LONDON) == starts(after, LONDON) == ["09:00"]
    assert after[0][0] - before[0][0] == 24 * 3600 - 3600  # the night was an hour shorter


def test_busy_time_and_other_zones_are_respected() -> None:
    # on 27 March Israel is on +03:00 and London still on GMT: London's day starts at 12:00 Israel time
    hours = [WorkingHours("Asia/Jerusalem"), WorkingHours("Europe/London")]
    busy = [(at(ISRAEL, 27, 12, 30), at(ISRAEL, 27, 12, 45))]
    slots = free_slots((at(ISRAEL, 27, 9), at(ISRAEL, 27, 13, 30)), 1800, busy, hours)
    assert starts(slots, ISRAEL) == ["12:00", "12:45", "13:00"]


def test_a_window_that_starts_off_the_quarter_hour_rounds_up() -> None:
    slots = free_slots(
        (at(ISRAEL, 27, 10, 7), at(ISRAEL, 27, 11)), 1800, [], [WorkingHours("Asia/Jerusalem")]
    )
    assert starts(slots, ISRAEL) == ["10:15", "10:30"]


def test_a_meeting_may_end_at_midnight_but_not_run_over_it() -> None:
    owl = [WorkingHours("UTC", 22 * 60, 24 * 60)]
    utc = ZoneInfo("UTC")
    slots = free_slots((at(utc, 27, 23), at(utc, 28, 1)), 1800, [], owl)
    assert starts(slots, utc) == ["23:00", "23:15", "23:30"]
