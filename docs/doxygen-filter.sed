# Doxygen input filter (docs/Doxyfile): the public headers comment in plain /* */ prose.
# The comment that opens a header becomes the file's description ("/** @file");
# every other "/*" opening becomes "/**", so Doxygen attaches that prose to the
# declaration after it.
1s|^/\*$|/** @file|
1!s|/\*\([^*]\)|/**\1|
1!s|/\*$|/**|
