// libjxl, opened on first use (see include/CCodecLoader.h).
#include <jxl/decode.h>
#include "lazy.h"

#define JXL_FUNCTIONS(F, V)                                                                        \
    V(JxlDecoderCloseInput, (JxlDecoder *dec), (dec))                                             \
    F(JxlDecoder *, JxlDecoderCreate, (const JxlMemoryManager *manager), (manager))               \
    V(JxlDecoderDestroy, (JxlDecoder *dec), (dec))                                                \
    F(JxlDecoderStatus, JxlDecoderGetBasicInfo, (const JxlDecoder *dec, JxlBasicInfo *info), (dec, info)) \
    F(JxlDecoderStatus, JxlDecoderGetColorAsEncodedProfile,                                       \
      (const JxlDecoder *dec, const JxlPixelFormat *format, JxlColorProfileTarget target, JxlColorEncoding *encoding), \
      (dec, format, target, encoding))                                                            \
    F(JxlDecoderStatus, JxlDecoderGetColorAsICCProfile,                                           \
      (const JxlDecoder *dec, const JxlPixelFormat *format, JxlColorProfileTarget target, uint8_t *icc, size_t size), \
      (dec, format, target, icc, size))                                                           \
    F(JxlDecoderStatus, JxlDecoderGetFrameHeader, (const JxlDecoder *dec, JxlFrameHeader *header), (dec, header)) \
    F(JxlDecoderStatus, JxlDecoderGetICCProfileSize,                                              \
      (const JxlDecoder *dec, const JxlPixelFormat *format, JxlColorProfileTarget target, size_t *size), \
      (dec, format, target, size))                                                                \
    F(JxlDecoderStatus, JxlDecoderImageOutBufferSize,                                             \
      (const JxlDecoder *dec, const JxlPixelFormat *format, size_t *size), (dec, format, size))   \
    F(JxlDecoderStatus, JxlDecoderProcessInput, (JxlDecoder *dec), (dec))                         \
    F(size_t, JxlDecoderReleaseInput, (JxlDecoder *dec), (dec))                                   \
    F(JxlDecoderStatus, JxlDecoderSetImageOutBuffer,                                              \
      (JxlDecoder *dec, const JxlPixelFormat *format, void *buffer, size_t size), (dec, format, buffer, size)) \
    F(JxlDecoderStatus, JxlDecoderSetInput, (JxlDecoder *dec, const uint8_t *data, size_t size), (dec, data, size)) \
    F(JxlDecoderStatus, JxlDecoderSetParallelRunner,                                              \
      (JxlDecoder *dec, JxlParallelRunner runner, void *opaque), (dec, runner, opaque))            \
    F(JxlDecoderStatus, JxlDecoderSetCoalescing, (JxlDecoder *dec, JXL_BOOL coalescing), (dec, coalescing)) \
    F(JxlDecoderStatus, JxlDecoderSetKeepOrientation, (JxlDecoder *dec, JXL_BOOL keep), (dec, keep)) \
    F(JxlDecoderStatus, JxlDecoderSetUnpremultiplyAlpha, (JxlDecoder *dec, JXL_BOOL unpremultiply), (dec, unpremultiply)) \
    F(JxlDecoderStatus, JxlDecoderSubscribeEvents, (JxlDecoder *dec, int events), (dec, events))

WEBIMAGE_LAZY_LIBRARY(jxl, JXL_FUNCTIONS, "libjxl0.7", "libjxl.so.0.7", "libjxl.so")
