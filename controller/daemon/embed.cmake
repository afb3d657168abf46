# embed.cmake - write INPUT's bytes as a C array NAME (and NAME_len, without the NUL that ends
# the array) into OUTPUT: cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P embed.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR len "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}" "/* Generated from ${INPUT} by embed.cmake: do not edit. */\n#include <stddef.h>\n"
     "const char ${NAME}[] = {\n${bytes}0x00 };\nconst size_t ${NAME}_len = ${len};\n")
