package io.pgqueue.schedule;

import io.pgqueue.InvalidSettingException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScheduleTests {

    @Test
    void aMissingZoneOrCatchUpIsNamedWithWhatItMayBe() {
        Schedule nightly = Schedule.of("nightly", "report", "0 0 2 * * *");
        assertThatThrownBy(() -> nightly.withCatchUp(null)).isInstanceOf(InvalidSettingException.class)
            .hasMessageContaining("'catchUp'").hasMessageContaining("RUN_ONCE, RUN_ALL or SKIP");
        assertThatThrownBy(() -> nightly.withZone(null)).isInstanceOf(InvalidSettingException.class)
            .hasMessageContaining("'zone'").hasMessageContaining("time zone");
    }
}
