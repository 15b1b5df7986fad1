// SPDX-License-Identifier: GPL-2.0
/* twigfs-dump: print the superblock and every tree block of a twigfs. */
#include "twig_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd, ret;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: twigfs-dump device|image\n");
		return 8;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "twigfs-dump: cannot open %s: %s\n", argv[1],
			strerror(errno));
		return 8;
	}
	ret = twig_dump(fd, stdout);
	close(fd);
	return ret ? 8 : 0;
}
