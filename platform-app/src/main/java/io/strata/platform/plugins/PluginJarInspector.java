package io.strata.platform.plugins;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/**
 * Checks a jar's structure before PF4J sees it, so a bad file is reported with a reason an operator
 * can act on ("no plugin.properties at the jar root") instead of a class-loading stack trace.
 * Nothing in the jar is executed here.
 */
public final class PluginJarInspector {

    /** Plugin ids become file names and URL path segments, so keep them tame. */
    static final Pattern PLUGIN_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    static final String DESCRIPTOR = "plugin.properties";
    static final String EXTENSION_INDEX = "META-INF/extensions.idx";

    public PluginJar inspect(Path jar) throws InvalidPluginJarException {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            Properties descriptor = readDescriptor(zip);
            String id = required(descriptor, "plugin.id");
            if (!PLUGIN_ID.matcher(id).matches()) {
                throw new InvalidPluginJarException("plugin.id '" + id + "' is not a valid id (letters, digits, '.', '_', '-'; at most 64)");
            }
            String version = required(descriptor, "plugin.version");
            String pluginClass = descriptor.getProperty("plugin.class", "").strip();
            if (!pluginClass.isEmpty() && !pluginClass.startsWith("org.pf4j.")
                    && zip.getEntry(pluginClass.replace('.', '/') + ".class") == null) {
                throw new InvalidPluginJarException(DESCRIPTOR + " names plugin.class " + pluginClass + " but the jar has no such class");
            }
            List<String> extensions = readExtensionIndex(zip);
            for (String cls : extensions) {
                if (zip.getEntry(cls.replace('.', '/') + ".class") == null) {
                    throw new InvalidPluginJarException(EXTENSION_INDEX + " names " + cls + " but the jar has no such class");
                }
            }
            return new PluginJar(id, version, descriptor.getProperty("plugin.provider", "").strip(),
                    descriptor.getProperty("plugin.description", "").strip(), extensions);
        } catch (ZipException e) {
            throw new InvalidPluginJarException("not a jar (zip) file: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new InvalidPluginJarException("cannot read the jar: " + e.getMessage(), e);
        }
    }

    private static Properties readDescriptor(ZipFile zip) throws IOException, InvalidPluginJarException {
        ZipEntry entry = zip.getEntry(DESCRIPTOR);
        if (entry == null) {
            throw new InvalidPluginJarException("not a plugin: no " + DESCRIPTOR + " at the jar root");
        }
        Properties properties = new Properties();
        try (InputStream in = zip.getInputStream(entry)) {
            properties.load(new InputStreamReader(in, StandardCharsets.UTF_8));
        }
        return properties;
    }

    private static String required(Properties descriptor, String key) throws InvalidPluginJarException {
        String value = descriptor.getProperty(key, "").strip();
        if (value.isEmpty()) {
            throw new InvalidPluginJarException(DESCRIPTOR + " has no " + key);
        }
        return value;
    }

    private static List<String> readExtensionIndex(ZipFile zip) throws IOException {
        ZipEntry entry = zip.getEntry(EXTENSION_INDEX);
        List<String> classes = new ArrayList<>();
        if (entry == null) {
            return classes;
        }
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(zip.getInputStream(entry), StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                String name = line.strip();
                if (!name.isEmpty() && !name.startsWith("#")) {
                    classes.add(name);
                }
            }
        }
        return classes;
    }
}
