package io.quorumlock.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * A start that a {@code quorumlock.*} property stopped: Boot's report shows the one line that
 * names the property and the remedy, in place of the stack trace, which it logs at DEBUG.
 */
final class QuorumlockFailureAnalyzer extends AbstractFailureAnalyzer<QuorumlockPropertyException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, QuorumlockPropertyException cause) {
        return new FailureAnalysis(cause.getMessage(), null, cause);
    }
}
