package io.quorumlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The versions of optional dependencies this kit was built with, from {@code versions.properties}. */
final class KitVersions {

    private KitVersions() {}

    /** The version of {@code name} ({@code curator}, {@code bouncycastle}), or {@code fallback} if unknown. */
    static String of(String name, String fallback) {
        Properties versions = new Properties();
        try (InputStream in = KitVersions.class.getResourceAsStream("versions.properties")) {
            if (in != null) {
                versions.load(in);
            }
        } catch (IOException e) {
            // unknown: the fallback
        }
        return versions.getProperty(name, fallback);
    }
}
