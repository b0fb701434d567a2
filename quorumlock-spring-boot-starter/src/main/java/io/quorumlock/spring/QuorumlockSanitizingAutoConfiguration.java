package io.quorumlock.spring;

import io.quorumlock.internal.Secrets;
import java.util.List;
import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;

/**
 * Keeps the lock's secrets out of Actuator's {@code configprops} and {@code env} endpoints even
 * when they show values ({@code show-values=always}): {@code quorumlock.redis.password} is masked,
 * and the credentials in node URIs and endpoints are replaced by {@value Secrets#MASK}.
 */
@AutoConfiguration
@ConditionalOnClass(SanitizingFunction.class)
public class QuorumlockSanitizingAutoConfiguration {

    @Bean
    SanitizingFunction quorumlockSanitizingFunction() {
        return QuorumlockSanitizingAutoConfiguration::sanitize;
    }

    static SanitizableData sanitize(SanitizableData data) {
        String key = data.getLowerCaseKey();
        if (!key.startsWith("quorumlock")) {
            return data;
        }
        if (key.endsWith("password")) {
            return data.withSanitizedValue();
        }
        Object value = data.getValue();
        if (value instanceof String text) {
            return data.withValue(Secrets.redactUri(text));
        }
        if (value instanceof List<?> list) {
            return data.withValue(list.stream()
                    .map(e -> e instanceof String text ? Secrets.redactUri(text) : e)
                    .toList());
        }
        return data;
    }
}
