package io.quorumlock.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * A start that a {@code quorumlock.*} property stopped: Boot's report shows the one line that
 * names the property and the remedy, in place of the stack trace, which it logs at DEBUG.
 */
@Order(Ordered.HIGHEST_PRECEDENCE) // before Boot's, which report a binding's or a bean's failure as such
final class QuorumlockFailureAnalyzer extends AbstractFailureAnalyzer<QuorumlockPropertyException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, QuorumlockPropertyException cause) {
        return new FailureAnalysis(cause.getMessage(), null, cause);
    }
}
