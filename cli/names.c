/*
 * names.c - which names a tensor answers to, for clean's --include,
 * --exclude and --together patterns and its --apply-params lookup.
 *
 * A tensor is listed under one name, but an HDF5 dataset reachable
 * through several hard links (h5py: f['b'] = f['a']) has a path for each
 * (HDF5 User's Guide, "HDF5 Groups": every hard link to an object is an
 * equal name of it; h5py's .name gives one of them). The reader lists it
 * once, under its first path in walk order (formats/hdf5_child.c), and
 * keeps the others (na_hdf5_aliases, at most NA_HDF5_MAX_ALIASES): a
 * pattern a user writes for any of them names the same data.
 */
#include "cli.h"
#include "clean_params.h"

#include <fnmatch.h> /* fnmatch */

int cli_name_match(const na_input_t *in, size_t i, const char *name, const char *pat)
{
    /* a name given exactly matches even when it holds glob characters
     * (round 39a: 'br[1]' matched nothing) */
    if (name != NULL && (fnmatch(pat, name, 0) == 0 || strcmp(pat, name) == 0))
        return 1;
    const char *const *alias;
    size_t n = na_hdf5_aliases(in, i, &alias, NULL);
    for (size_t k = 0; k < n; k++)
        if (fnmatch(pat, alias[k], 0) == 0 || strcmp(pat, alias[k]) == 0)
            return 1;
    return 0;
}

const char *cli_params_key(json_t *root, const na_input_t *in, size_t i, const char *name)
{
    json_t *tensors = json_object_get(root, "tensors");
    if (name == NULL || json_object_get(tensors, name) != NULL)
        return name;
    const char *const *alias;
    size_t n = na_hdf5_aliases(in, i, &alias, NULL);
    for (size_t k = 0; k < n; k++)
        if (json_object_get(tensors, alias[k]) != NULL)
            return alias[k];
    /* the same name with its leading '/' added or taken away: an HDF5
     * path is relative to the root group ('/X' and 'X' name one dataset),
     * an .npz, safetensors or PyTorch name has no '/', so a fit on
     * train.h5 applies to test.npz (round 43) */
    char alt[1024];
    int len = name[0] == '/' ? snprintf(alt, sizeof alt, "%s", name + 1)
                             : snprintf(alt, sizeof alt, "/%s", name);
    void *it = len > 0 && (size_t)len < sizeof alt ? json_object_iter_at(tensors, alt) : NULL;
    return it ? json_object_iter_key(it) : name;
}
