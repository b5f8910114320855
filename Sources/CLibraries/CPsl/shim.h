// libpsl: the Public Suffix List (Debian's libpsl, as curl and wget use it), for cookie domains.
#include <libpsl.h>
