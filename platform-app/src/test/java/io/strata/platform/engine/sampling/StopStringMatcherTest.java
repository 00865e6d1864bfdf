package io.strata.platform.engine.sampling;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class StopStringMatcherTest {

    @Test
    void neverEmitsAPrefixOfAStopStringThatLaterCompletes() {
        StopStringMatcher m = new StopStringMatcher(List.of("END"), false);
        List<String> sent = new ArrayList<>();
        sent.add(m.accept("hello E").emit());
        sent.add(m.accept("N").emit());
        StopStringMatcher.Step last = m.accept("D tail");
        sent.add(last.emit());
        assertThat(String.join("", sent)).isEqualTo("hello ");
        assertThat(sent).noneMatch(s -> s.contains("E"));
        assertThat(last.stopped()).isTrue();
        assertThat(last.matchedStop()).isEqualTo("END");
        assertThat(m.accept("more").emit()).isEmpty();
    }

    @Test
    void releasesHeldTextWhenThePrefixDoesNotComplete() {
        StopStringMatcher m = new StopStringMatcher(List.of("END"), false);
        assertThat(m.accept("abcE").emit()).isEqualTo("abc");
        assertThat(m.accept("Nx").emit()).isEqualTo("ENx");
        assertThat(m.accept("E").emit()).isEmpty();
        assertThat(m.flush()).isEqualTo("E");
    }

    @Test
    void includeStopKeepsTheStopStringAndEarliestMatchWins() {
        StopStringMatcher m = new StopStringMatcher(List.of("cd", "b"), true);
        StopStringMatcher.Step s = m.accept("abcd");
        assertThat(s.emit()).isEqualTo("ab");
        assertThat(s.matchedStop()).isEqualTo("b");
    }

    @Test
    void stopSplitAcrossManyOneCharacterDeltas() {
        StopStringMatcher m = new StopStringMatcher(List.of("\n\nUser:"), false);
        StringBuilder out = new StringBuilder();
        String text = "answer\n\nUser: ignored";
        StopStringMatcher.Step step = null;
        for (char c : text.toCharArray()) {
            step = m.accept(String.valueOf(c));
            out.append(step.emit());
            if (step.stopped()) {
                break;
            }
        }
        assertThat(out.toString()).isEqualTo("answer");
        assertThat(step.stopped()).isTrue();
    }

    @Test
    void withoutStopsTextPassesThrough() {
        StopStringMatcher m = new StopStringMatcher(List.of(), false);
        assertThat(m.accept("x").emit()).isEqualTo("x");
        assertThat(m.flush()).isEmpty();
    }

    @Test
    void doesNotSplitASurrogatePair() {
        StopStringMatcher m = new StopStringMatcher(List.of("\uDE00zz"), false);
        // "a" + U+1F600 (\uD83D\uDE00): the low surrogate starts the stop string's prefix, so the high one must wait too
        String emitted = m.accept("a\uD83D\uDE00").emit();
        assertThat(emitted).isEqualTo("a");
    }
}
