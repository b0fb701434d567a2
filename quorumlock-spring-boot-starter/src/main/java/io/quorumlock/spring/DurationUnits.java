package io.quorumlock.spring;

import java.time.Duration;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * Refuses a {@code quorumlock.*} duration given as a bare number, such as {@code
 * quorumlock.leader.ttl=10}: Boot would read it as milliseconds, and a TTL of 10 ms is not what
 * anyone writing 10 means. Every other property is bound as Boot binds it.
 */
final class DurationUnits extends AbstractBindHandler {

    /** A number without a unit, as a properties file, YAML or the environment gives it. */
    private static final Pattern BARE_NUMBER = Pattern.compile("[-+]?\\d+");

    private static final ConfigurationPropertyName QUORUMLOCK = ConfigurationPropertyName.of("quorumlock");

    DurationUnits(BindHandler parent) {
        super(parent);
    }

    /** The advisor that puts this check into the binding of every {@code @ConfigurationProperties} bean. */
    static ConfigurationPropertiesBindHandlerAdvisor advisor() {
        return DurationUnits::new;
    }

    @Override
    public Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context, Object result) {
        ConfigurationProperty property = context.getConfigurationProperty();
        if (result instanceof Duration
                && property != null
                && QUORUMLOCK.isAncestorOf(name)
                && BARE_NUMBER
                        .matcher(String.valueOf(property.getValue()).trim())
                        .matches()) {
            String value = String.valueOf(property.getValue()).trim();
            throw new QuorumlockPropertyException(name + "=" + value + " has no unit, and would be read as " + value
                    + " ms: write the unit, such as " + value + "s for seconds (ms, s, m, h and d are understood)");
        }
        return super.onSuccess(name, target, context, result);
    }
}
