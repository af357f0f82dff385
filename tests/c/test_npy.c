/* test_npy.c - .npy header parsing. */
#include "check.h"
#include "base/npy.h"

static size_t make(unsigned char *buf, int version, const char *dict)
{
    size_t dl = strlen(dict), hs = version == 1 ? 10 : 12;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    buf[8] = (unsigned char)(dl & 0xff);
    buf[9] = (unsigned char)(dl >> 8);
    if (version != 1) buf[10] = buf[11] = 0;
    memcpy(buf + hs, dict, dl);
    return hs + dl;
}

int main(void)
{
    unsigned char b[512];
    mh_npy n;
    mh_error e;
    mh_error_clear(&e);
    size_t len = make(b, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (264, 256), }          \n");
    CHECK(mh_npy_parse(b, len, &n, &e) == 0);
    CHECK(n.count == 264 * 256 && n.data_offset == len && !n.big_endian);

    len = make(b, 2, "{'descr': '>i4', 'fortran_order': True, 'shape': (1024,), }\n");
    CHECK(mh_npy_parse(b, len, &n, &e) == 0);
    CHECK(n.count == 1024 && n.big_endian && n.data_offset == len);

    len = make(b, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (), }\n");
    CHECK(mh_npy_parse(b, len, &n, &e) == 0 && n.count == 1);

    len = make(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    CHECK_CONTAINS(e.message, "'<f4' is not a 4-byte integer");

    len = make(b, 1, "{'descr': '<u8', 'fortran_order': False, 'shape': (4,), }\n");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);

    len = make(b, 1, "{'descr': '<u4', 'fortran_order': True, 'shape': (4, 8), }\n");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    CHECK_CONTAINS(e.message, "Fortran order");

    len = make(b, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (99999999999999999999999,), }\n");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);

    len = make(b, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (4,");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);

    len = make(b, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (4,), }\n");
    CHECK(mh_npy_parse(b, len - 20, &n, &e) == MH_E_BAD_BUFFER); /* header longer than the data */
    CHECK_CONTAINS(e.message, "file is shorter");

    /* keys whose values run off the end of the header (found by fuzzing) */
    len = make(b, 1, "{'descr': '<u4', 'fortran_order': False, 'shape':");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    len = make(b, 1, "{'descr': '<u4', 'shape': (4,), 'fortran_order': Tr");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER); /* neither True nor False (issue 25) */
    CHECK_CONTAINS(e.message, "'fortran_order' must be True or False");
    len = make(b, 1, "{'descr': '<u4', 'fortran_order': banana, 'shape': (4,), }");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    len = make(b, 1, "{'descr': '<u4', 'fortran_order': Falsehood, 'shape': (4,), }");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    len = make(b, 1, "{'descr': '<u4', 'shape': (4,), 'fortran_order': True}");
    CHECK(mh_npy_parse(b, len, &n, &e) == 0); /* 1-D: either order is one */
    /* a key twice (numpy keeps the last; the first was read) and a structured dtype (third hostile round) */
    len = make(b, 1, "{'descr': '<u4', 'descr': '<f8', 'fortran_order': False, 'shape': (4,), }");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    CHECK_CONTAINS(e.message, "gives 'descr' twice");
    len = make(b, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (4,), 'shape': (8,)}");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    CHECK_CONTAINS(e.message, "gives 'shape' twice");
    len = make(b, 1, "{'descr': [('a', '<u4'), ('b', '<u4')], 'fortran_order': False, 'shape': (4,), }");
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    CHECK_CONTAINS(e.message, "structured");

    b[6] = 9;
    CHECK(mh_npy_parse(b, len, &n, &e) == MH_E_BAD_BUFFER);
    CHECK(mh_npy_parse((const unsigned char *)"NOTNUMPYATALL", 13, &n, &e) == MH_E_BAD_BUFFER);
    return check_report("test_npy");
}
