// SHA-256 and HMAC-SHA256 from the system's libcrypto (OpenSSL 3, Debian's libssl-dev): the
// EVP digest calls and the one-shot HMAC, with OpenSSL's constant-time comparison.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
